#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include "cmd/commands.h"
#include "core/common/error.h"
#include "pipelines/controller.h"
#include "wal/lock.h"

namespace fld::cmd {

namespace {
std::atomic<bool> g_stop{false};
std::atomic<bool> g_checkpoint{false};
extern "C" void OnSignal(int) {
  g_stop.store(true);
}
extern "C" void OnCheckpointSignal(int) {
  g_checkpoint.store(true);
}

// The pid of the process running the pipeline on this host, or an error saying why there is none.
long RunningPid(const PipelineSpec& spec) {
  auto holder = StorageLock::Holder(spec.storage_path);
  if (!holder)
    Fail(ErrorKind::kUsage, "pipeline '{}' is not running (no process holds {})", spec.name, spec.storage_path);
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  if (holder->host != host)
    Fail(ErrorKind::kUsage, "pipeline '{}' runs on host {} (pid {}), not here", spec.name, holder->host, holder->pid);
  return holder->pid;
}
}  // namespace

int Run(const RunOptions& o) {
  Controller controller(LoadSpec(o.spec), ControllerOptions{o.reset, !o.quiet && isatty(STDERR_FILENO) != 0});
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  struct sigaction ck {};
  ck.sa_handler = OnCheckpointSignal;
  sigemptyset(&ck.sa_mask);
  sigaction(SIGUSR1, &ck, nullptr);
  controller.SetCheckpointFlag(&g_checkpoint);
  RunSummary s = controller.Run(&g_stop);
  if (!o.quiet && !s.no_new_input) {
    double rate = s.seconds > 0 ? static_cast<double>(s.records) / s.seconds : 0;
    std::cout << fmt::format("{}: {} {} records in {} steps{}, {:.3f} s, {:.0f} records/s\n",
                             controller.pipeline().spec().name, s.completed ? "completed:" : "stopped:", s.records,
                             s.steps, s.replayed ? fmt::format(" ({} replayed)", s.replayed) : "", s.seconds, rate);
  }
  // Everything the run wrote is stored and flushed: exit without freeing the operators' state.
  controller.CloseForExit();
  std::cout.flush();
  std::fflush(nullptr);
  spdlog::shutdown();
  std::_Exit(0);
}

int Stop(const StopOptions& o) {
  PipelineSpec spec = LoadSpec(o.spec);
  long pid = RunningPid(spec);
  if (::kill(static_cast<pid_t>(pid), SIGTERM) != 0)
    Fail(ErrorKind::kRuntime, "cannot signal pid {}: {}", pid, std::strerror(errno));
  // Wait for the graceful stop: the step ends, a checkpoint is written, the lock is released.
  for (int i = 0; i < o.timeout_secs * 10; ++i) {
    if (!StorageLock::Holder(spec.storage_path)) {
      std::cerr << fmt::format("{}: stopped (checkpointed; `fld run` resumes it)\n", spec.name);
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  Fail(ErrorKind::kRuntime, "pipeline '{}' (pid {}) did not stop within {} s", spec.name, pid, o.timeout_secs);
}

int CheckpointNow(const StopOptions& o) {
  PipelineSpec spec = LoadSpec(o.spec);
  long pid = RunningPid(spec);
  if (::kill(static_cast<pid_t>(pid), SIGUSR1) != 0)
    Fail(ErrorKind::kRuntime, "cannot signal pid {}: {}", pid, std::strerror(errno));
  std::cerr << fmt::format("{}: checkpoint requested from pid {}\n", spec.name, pid);
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
