#pragma once
// The standard process_* metrics of Prometheus client libraries (client_golang's process
// collector), read from /proc/self when scraped. On a system without /proc they are left out.

#include <prometheus/metric_family.h>

#include <vector>

namespace berth::metrics {

// process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_start_time_seconds, process_open_fds, process_max_fds.
std::vector<prometheus::MetricFamily> processFamilies();

}  // namespace berth::metrics
