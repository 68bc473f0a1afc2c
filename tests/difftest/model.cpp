#include "tests/difftest/model.h"

#include <algorithm>
#include <deque>

namespace difftest {

std::uint64_t PermTable::key(const Attr& a, int user) {
  return (std::uint64_t{a.type & 0xf} << 60) | (std::uint64_t{a.mode & 07777} << 48) |
         (std::uint64_t{a.uid & 0xffff} << 32) | (std::uint64_t{a.gid & 0xffff} << 16) |
         static_cast<std::uint64_t>(user & 0xffff);
}

std::optional<std::uint32_t> PermTable::bits(const Attr& a, int user) const {
  auto it = bits_.find(key(a, user));
  if (it == bits_.end()) return std::nullopt;
  return it->second;
}

void PermTable::learn(const Attr& a, int user, std::uint32_t bits) { bits_[key(a, user)] = bits; }

int Model::find(const Handle& origin) const {
  auto it = by_origin_.find(std::string(origin.begin(), origin.end()));
  return it == by_origin_.end() ? -1 : it->second;
}

int Model::add(const Handle& origin, std::uint32_t label, std::string made_as) {
  const int id = count();
  Obj o;
  o.origin = origin;
  o.label = label;
  o.made_as = std::move(made_as);
  objs_.push_back(std::move(o));
  by_origin_[std::string(origin.begin(), origin.end())] = id;
  by_label_.emplace(label, id);  // a step makes at most one object; the first is kept
  return id;
}

int Model::by_label(std::uint32_t label) const {
  auto it = by_label_.find(label);
  return it == by_label_.end() ? -1 : it->second;
}

std::optional<std::vector<std::pair<int, std::string>>> Model::walk(int root, int id) const {
  // Breadth first over current bindings; trees here are small (tens of objects).
  std::unordered_map<int, std::pair<int, std::string>> came_from;
  std::deque<int> queue{root};
  came_from[root] = {-1, ""};
  while (!queue.empty()) {
    const int dir = queue.front();
    queue.pop_front();
    if (dir == id) break;
    for (const auto& [name, history] : obj(dir).names) {
      if (name == "." || name == ".." || !history.known()) continue;
      const int child = history.current();
      if (child == kNoName || came_from.count(child)) continue;
      came_from[child] = {dir, name};
      if (obj(child).type() == kDir) queue.push_back(child);
    }
  }
  if (!came_from.count(id)) return std::nullopt;
  std::vector<std::pair<int, std::string>> steps;
  for (int at = id; at != root;) {
    const auto& [dir, name] = came_from[at];
    steps.insert(steps.begin(), {dir, name});
    at = dir;
  }
  return steps;
}

std::vector<int> Model::reachable(int root) const {
  std::vector<int> out{root};
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (const auto& [name, history] : obj(out[i]).names) {
      if (name == "." || name == ".." || !history.known()) continue;
      const int child = history.current();
      if (child == kNoName || std::find(out.begin(), out.end(), child) != out.end()) continue;
      out.push_back(child);
    }
  }
  return out;
}

void Dirty::write(std::uint64_t offset, const std::string& bytes) {
  const std::size_t end = static_cast<std::size_t>(offset) + bytes.size();
  if (data.size() < end) {
    data.resize(end, '\0');
    held.resize(end, false);
  }
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    data[static_cast<std::size_t>(offset) + i] = bytes[i];
    held[static_cast<std::size_t>(offset) + i] = true;
  }
}

std::string Dirty::over(const std::string& below) const {
  std::string out = below;
  out.resize(static_cast<std::size_t>(size), '\0');
  for (std::size_t i = 0; i < data.size() && i < out.size(); ++i)
    if (held[i]) out[i] = data[i];
  return out;
}

std::string Dirty::flushed_over(const std::string& origin) const {
  std::string out = origin;
  if (out.size() < data.size()) out.resize(data.size(), '\0');
  for (std::size_t i = 0; i < data.size(); ++i)
    if (held[i]) out[i] = data[i];
  return out;
}

std::string Dirty::describe() const {
  std::uint64_t count = 0, first = data.size();
  for (std::size_t i = 0; i < held.size(); ++i)
    if (held[i]) {
      ++count;
      first = std::min<std::uint64_t>(first, i);
    }
  return "size " + std::to_string(size) + ", " + std::to_string(count) + " bytes held in [" + std::to_string(first) +
         ", " + std::to_string(data.size()) + ")" + (attr ? "" : ", times not seen since a kill -9") +
         (conflict ? ", changed at the origin meanwhile" : "");
}

std::vector<int> Model::dirty() const {
  std::vector<int> out;
  for (int id = 0; id < count(); ++id)
    if (obj(id).dirty) out.push_back(id);
  return out;
}

std::string Model::path(int root, int id) const {
  if (id == root) return ".";
  if (auto steps = walk(root, id)) {
    std::string p;
    for (const auto& [dir, name] : *steps) p += (p.empty() ? "" : "/") + name;
    return p;
  }
  return obj(id).made_as + " (gone from there)";
}

}  // namespace difftest
