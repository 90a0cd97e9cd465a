// Placeholder translation unit so the formats library exists before its first module lands.
