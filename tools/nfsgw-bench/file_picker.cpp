#include "tools/nfsgw-bench/file_picker.h"

#include <algorithm>

namespace nfsgw::bench {

FilePicker::FilePicker(std::size_t files, bool sequential, std::uint64_t seed, unsigned part, unsigned parts)
    : files_(std::max<std::size_t>(files, 1)),
      sequential_(sequential),
      rng_(seed),
      index_(part),
      stride_(std::max(parts, 1u)) {}

FilePick FilePicker::next() {
  if (!sequential_) return {rng_.below(files_), 0};
  FilePick p{static_cast<std::size_t>(index_ % files_), index_ / files_};
  index_ += stride_;
  return p;
}

}  // namespace nfsgw::bench
