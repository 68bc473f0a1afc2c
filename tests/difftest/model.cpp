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
