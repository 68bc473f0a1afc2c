#pragma once
// The bench's working set, the same whether it is made through NFS (--setup)
// or in a local folder that an origin exports (--prepare-local):
//
//   <dir>/f000000 .. f<files-1>   --files regular files of --size bytes
//   <dir>/tree/d0..d7/t00..t15    a small tree for the walk mode, each dK also
//   <dir>/tree/dK/sub/s0..s7      holding one nested folder
//
// lookup-missing asks for nx000000.. which the working set never contains;
// churn creates and removes cr<tag>-<thread>-<n>, which it never contains either.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tools/nfsgw-bench/bench_options.h"
#include "tools/nfsgw-bench/nfs_connection.h"
#include "tools/nfsgw-bench/task_queue.h"

namespace nfsgw::bench {

inline constexpr unsigned kTreeDirs = 8;
inline constexpr unsigned kTreeFiles = 16;
inline constexpr unsigned kSubFiles = 8;

std::string file_name(unsigned i);
std::string missing_name(unsigned i);
/// The n-th name the churn workload of thread `thread` creates; `tag` (the
/// bench's pid) keeps names of different runs apart.
std::string churn_name(std::uint64_t tag, unsigned thread, std::uint64_t n);
/// Deterministic printable content, so a read can be checked by eye.
std::vector<std::uint8_t> file_content(std::uint32_t size);

/// Writes the working set under base/<o.dir> (creating folders, overwriting
/// files). Throws std::runtime_error with the failing path.
void prepare_local(const std::string& base, const Options& o);

/// Queues the tasks that create the working set under root through NFS.
/// *dir_fh receives the working folder's handle once it is known (it must
/// outlive the queue's run).
void push_setup_tasks(TaskQueue& q, const FileHandle& root, const Options& o, FileHandle* dir_fh);

/// Queues LOOKUPs of the --files names in dir, filling (*fhs)[i]; a missing
/// file fails the queue with a hint to run --setup.
void push_resolve_tasks(TaskQueue& q, const FileHandle& dir, unsigned files,
                        std::vector<FileHandle>* fhs);

}  // namespace nfsgw::bench
