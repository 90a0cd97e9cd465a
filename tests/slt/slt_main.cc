// fld_slt: sqllogictest runner (placeholder).
int main() { return 0; }
