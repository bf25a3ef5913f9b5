// CPU time of the processes a benchmark starts, read from /proc (Linux): one process, and a
// PostgreSQL server with its backends. Benchmarks take a reading before and after a measured
// window and report the difference per unit of work.
#pragma once

#include <sys/types.h>

#include <string>

namespace reckon::bench {

// User + system CPU seconds of `pid` so far (not its children); 0 when it cannot be read.
double ProcessCpuSeconds(pid_t pid);

// The CPU seconds of the PostgreSQL server listening on `port`: its postmaster (with the
// children it has reaped) and its live children. 0 when none is found.
double PostgresCpuSeconds(int port);

// Transactions committed and rolled back so far in `database`, read through psql with the
// connection string `postgres_url` (another database of the same server); -1 on failure.
// PostgreSQL counts a backend's transactions when it reports its statistics (at the latest
// when it exits), so read after the clients of `database` have disconnected.
double PostgresTransactions(const std::string& postgres_url, const std::string& database);

// The 1-minute load average (/proc/loadavg), to tell how busy a shared machine was; -1 if
// unreadable.
double LoadAverage();

}  // namespace reckon::bench
