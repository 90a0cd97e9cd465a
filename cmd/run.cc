#include <csignal>
#include <iostream>

#include <fmt/format.h>

#include "cmd/commands.h"
#include "pipelines/controller.h"

namespace fld::cmd {

namespace {
std::atomic<bool> g_stop{false};
extern "C" void OnSignal(int) { g_stop.store(true); }
}  // namespace

int Run(const RunOptions& o) {
  Pipeline pipeline(LoadSpec(o.spec), true);
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  Controller controller(&pipeline);
  RunSummary s = controller.Run(&g_stop);
  if (!o.quiet) {
    double rate = s.seconds > 0 ? static_cast<double>(s.records) / s.seconds : 0;
    std::cout << fmt::format("{}: {} {} records in {} steps, {:.3f} s, {:.0f} records/s\n", pipeline.spec().name,
                             s.completed ? "completed:" : "stopped:", s.records, s.steps, s.seconds, rate);
  }
  return 0;
}

}  // namespace fld::cmd
