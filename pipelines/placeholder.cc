// Placeholder translation unit so the pipelines library exists before its first module lands.
