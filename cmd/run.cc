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
  Controller controller(LoadSpec(o.spec), ControllerOptions{o.reset});
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  RunSummary s = controller.Run(&g_stop);
  if (!o.quiet && !s.already_completed) {
    double rate = s.seconds > 0 ? static_cast<double>(s.records) / s.seconds : 0;
    std::cout << fmt::format("{}: {} {} records in {} steps{}, {:.3f} s, {:.0f} records/s\n",
                             controller.pipeline().spec().name, s.completed ? "completed:" : "stopped:", s.records,
                             s.steps, s.replayed ? fmt::format(" ({} replayed)", s.replayed) : "", s.seconds, rate);
  }
  return 0;
}

int Clear(const ClearOptions& o) {
  PipelineSpec spec = LoadSpec(o.spec);
  if (!o.yes) {
    std::cerr << fmt::format("Delete the stored state and log of pipeline '{}' in {}? [y/N] ", spec.name,
                             spec.storage_path);
    std::string answer;
    if (!std::getline(std::cin, answer) || (answer != "y" && answer != "yes" && answer != "Y")) {
      std::cerr << "not deleted\n";
      return 1;
    }
  }
  ClearStorage(spec);
  std::cerr << fmt::format("{}: storage cleared\n", spec.name);
  return 0;
}

}  // namespace fld::cmd
