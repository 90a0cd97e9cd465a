#include "pipelines/query.h"

#include <editline/readline.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cmd/commands.h"
#include "core/common/error.h"
#include "formats/result_format.h"

namespace fld::cmd {

namespace {

// An interactive prompt: statements end with ';', history is kept in ~/.fld_history.
// Errors are printed and the prompt goes on; `\q`, `quit`, `exit` or end of input leave it.
int Interactive(const QueryOptions& o, ResultFormat format) {
  Pipeline pipeline(LoadSpec(o.spec), false);
  const char* home = std::getenv("HOME");
  std::string history = home ? std::string(home) + "/.fld_history" : "";
  using_history();
  if (!history.empty()) read_history(history.c_str());
  std::cout << "fld query on pipeline " << pipeline.spec().name << ": end statements with ';', \\q to quit\n";
  std::string pending;
  for (;;) {
    char* line = readline(pending.empty() ? "fld> " : "...> ");
    if (!line) break;
    std::string text(line);
    std::free(line);
    if (pending.empty() && (text == "\\q" || text == "quit" || text == "exit")) break;
    if (text.find_first_not_of(" \t") == std::string::npos && pending.empty()) continue;
    pending += (pending.empty() ? "" : "\n") + text;
    std::string trimmed = pending;
    while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back()))) trimmed.pop_back();
    if (trimmed.empty() || trimmed.back() != ';') continue;
    add_history(pending.c_str());
    if (!history.empty()) write_history(history.c_str());
    try {
      QueryResult r = RunAdHocQuery(pipeline, trimmed);
      PrintResult(std::cout, r.schema, r.rows, format);
    } catch (const Error& e) {
      std::cout << e.what() << "\n";
    }
    pending.clear();
  }
  std::cout << "\n";
  return 0;
}

}  // namespace

int Query(const QueryOptions& o) {
  ResultFormat format;
  if (!ParseResultFormat(o.format, &format)) return 2;
  std::string sql = o.sql;
  if (!o.file.empty()) {
    if (!sql.empty()) Fail(ErrorKind::kUsage, "give the query either as an argument or with -f, not both");
    std::ifstream in(o.file);
    if (!in) Fail(ErrorKind::kUsage, "{}: cannot read the query file", o.file);
    std::stringstream ss;
    ss << in.rdbuf();
    sql = ss.str();
  } else if (sql.empty()) {
    if (isatty(STDIN_FILENO)) return Interactive(o, format);
    std::stringstream ss;
    ss << std::cin.rdbuf();
    sql = ss.str();
  }
  Pipeline pipeline(LoadSpec(o.spec), false);
  QueryResult r = RunAdHocQuery(pipeline, sql);
  PrintResult(std::cout, r.schema, r.rows, format);
  return 0;
}

}  // namespace fld::cmd
