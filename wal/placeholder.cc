// Placeholder translation unit so the wal library exists before its first module lands.
