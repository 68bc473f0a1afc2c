// BlockFiles in memory (unit tests of the store and of the gateway above it).
#include <map>
#include <mutex>

#include "cache/block_files.h"

namespace nfsgw::cache {
namespace {

class MemoryBlockFiles final : public BlockFiles {
 public:
  void write(std::uint64_t id, std::uint64_t offset, std::string_view data) override {
    std::lock_guard lock(mu_);
    std::string& f = files_[id];
    if (f.size() < offset + data.size()) f.resize(offset + data.size(), '\0');
    f.replace(offset, data.size(), data);
  }
  std::optional<std::size_t> read_now(std::uint64_t id, std::uint64_t offset, char* out,
                                      std::size_t size) override {
    return read(id, offset, out, size);
  }
  std::size_t read(std::uint64_t id, std::uint64_t offset, char* out, std::size_t size) override {
    std::lock_guard lock(mu_);
    auto it = files_.find(id);
    if (it == files_.end() || it->second.size() <= offset) return 0;
    return it->second.copy(out, size, offset);
  }
  void punch(std::uint64_t id, std::uint64_t offset, std::uint64_t size) override {
    std::lock_guard lock(mu_);
    auto it = files_.find(id);
    if (it == files_.end() || it->second.size() <= offset) return;
    std::string& f = it->second;
    std::fill_n(f.begin() + static_cast<std::ptrdiff_t>(offset), std::min<std::uint64_t>(size, f.size() - offset), '\0');
  }
  void remove(std::uint64_t id) override {
    std::lock_guard lock(mu_);
    files_.erase(id);
  }
  std::uint64_t remove_unknown(const std::function<bool(std::uint64_t)>& known) override {
    std::lock_guard lock(mu_);
    return std::erase_if(files_, [&](const auto& f) { return !known(f.first); });
  }

 private:
  std::mutex mu_;
  std::map<std::uint64_t, std::string> files_;
};

}  // namespace

std::unique_ptr<BlockFiles> make_memory_block_files() { return std::make_unique<MemoryBlockFiles>(); }

}  // namespace nfsgw::cache
