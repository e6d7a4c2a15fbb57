#include "pkg/metrics/process.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

namespace berth::metrics {
namespace {

prometheus::MetricFamily single(std::string name, std::string help, prometheus::MetricType type,
                                double value) {
  prometheus::MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(std::move(m));
  return f;
}

// The system's boot time (btime of /proc/stat), in seconds since the epoch; 0 when unknown.
double bootTime() {
  std::ifstream in("/proc/stat");
  std::string key;
  while (in >> key) {
    if (key == "btime") {
      double t = 0;
      in >> t;
      return t;
    }
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

}  // namespace

std::vector<prometheus::MetricFamily> processFamilies() {
  std::ifstream in("/proc/self/stat");
  std::string stat;
  if (!std::getline(in, stat)) return {};
  // The command name (field 2) is in parentheses and may hold spaces: parse after its ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream fields(stat.substr(close + 2));
  // Fields from 3 (state) on; we need utime(14) stime(15) starttime(22) vsize(23) rss(24).
  std::string field;
  double utime = 0, stime = 0, starttime = 0, vsize = 0, rss = 0;
  for (int i = 3; i <= 24 && fields >> field; ++i) {
    const double v = std::strtod(field.c_str(), nullptr);
    if (i == 14) utime = v;
    if (i == 15) stime = v;
    if (i == 22) starttime = v;
    if (i == 23) vsize = v;
    if (i == 24) rss = v;
  }
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double pageSize = static_cast<double>(sysconf(_SC_PAGESIZE));

  std::error_code ec;
  double openFds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++openFds;
  }
  rlimit limit{};
  const double maxFds =
      getrlimit(RLIMIT_NOFILE, &limit) == 0 ? static_cast<double>(limit.rlim_cur) : 0;

  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> out;
  out.push_back(single("process_cpu_seconds_total",
                       "Total user and system CPU time spent in seconds.", MetricType::Counter,
                       (utime + stime) / ticks));
  out.push_back(single("process_max_fds", "Maximum number of open file descriptors.",
                       MetricType::Gauge, maxFds));
  out.push_back(
      single("process_open_fds", "Number of open file descriptors.", MetricType::Gauge, openFds));
  out.push_back(single("process_resident_memory_bytes", "Resident memory size in bytes.",
                       MetricType::Gauge, rss * pageSize));
  out.push_back(single("process_start_time_seconds",
                       "Start time of the process since unix epoch in seconds.", MetricType::Gauge,
                       bootTime() + starttime / ticks));
  out.push_back(single("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                       MetricType::Gauge, vsize));
  return out;
}

}  // namespace berth::metrics
