// The metadata cache: what `nfsgw invalidate` does to one export's entries.
#include <deque>
#include <unordered_set>

#include "gateway/metacache/metadata_cache.h"

namespace nfsgw::metacache {
namespace {

std::string bytes(const nfs3::FileHandle& fh) {
  return std::string(reinterpret_cast<const char*>(fh.bytes.data()), fh.len);
}

}  // namespace

std::optional<std::size_t> MetadataCache::invalidate(
    const nfs3::FileHandle& root, const std::vector<std::string>& components, bool recursive,
    const std::function<void(const nfs3::FileHandle&)>& dropped_object) {
  if (components.empty() && recursive) {
    store_.erase_export(space_);
    return 1;
  }
  // The path's directories count as seen, so that ".." never leads the walk above
  // the object asked for.
  std::unordered_set<std::string> seen{bytes(root)};
  nfs3::FileHandle at = root;
  for (const auto& name : components) {
    auto rec = store_.get<cache::LookupRecord>(name_key(at, name));
    if (!rec || !rec->exists) return std::nullopt;
    at = rec->child;
    seen.insert(bytes(at));
  }
  std::size_t dropped = 0;
  std::deque<nfs3::FileHandle> todo{at};
  seen.erase(bytes(at));
  while (!todo.empty()) {
    nfs3::FileHandle obj = todo.front();
    todo.pop_front();
    if (!seen.insert(bytes(obj)).second) continue;
    if (recursive) {
      for (const auto& child : store_.cached_children(key(obj))) todo.push_back(child);
    }
    store_.erase_object(key(obj));
    if (dropped_object) dropped_object(obj);
    ++dropped;
  }
  return dropped;
}

}  // namespace nfsgw::metacache
