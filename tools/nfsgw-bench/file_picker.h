#pragma once
// Which file of the working set a unit works on, and for read, at which offset.
//
// random (the default): a file picked at random, offset 0; every connection is
// spread over the whole working set, as many independent web workers would be.
// sequential: unit k of part p (of P parts, one per thread) takes the k-th index
// of that part, i = p + k * P, i.e. file i % files in round i / files. With one
// thread, --count N and N <= --files that is N distinct names one after the
// other, the "N LOOKUPs of distinct names" of the WAN figures. A read in round r
// is at offset r * --size, so a sequential read of --count chunks goes through
// the files round by round and never reads the same bytes twice (as long as the
// files are large enough).
#include <cstddef>
#include <cstdint>

namespace nfsgw::bench {

/// splitmix64: tiny, fast, and good enough to pick files.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }

 private:
  std::uint64_t s_;
};

struct FilePick {
  std::size_t file = 0;     ///< index into the working set
  std::uint64_t round = 0;  ///< sequential: how many times the set was gone through before
};

class FilePicker {
 public:
  /// files must be >= 1; part < parts.
  FilePicker(std::size_t files, bool sequential, std::uint64_t seed, unsigned part, unsigned parts);
  FilePick next();

 private:
  std::size_t files_;
  bool sequential_;
  Rng rng_;
  std::uint64_t index_;
  std::uint64_t stride_;
};

}  // namespace nfsgw::bench
