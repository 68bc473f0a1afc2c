#include "tests/difftest/starting_tree.h"

#include <string>

namespace difftest {

std::vector<Step> starting_tree() {
  std::vector<Step> steps;
  auto add = [&](Op op, int user, std::uint32_t in, const std::string& name) -> Step& {
    Step s;
    s.id = static_cast<std::uint32_t>(steps.size()) + 2;
    s.op = op;
    s.at_origin = true;
    s.setup = true;
    s.user = user;
    s.a = in;
    s.name = name;
    steps.push_back(s);
    return steps.back();
  };
  auto file = [&](int user, std::uint32_t in, const std::string& name, std::uint32_t mode, std::size_t size) {
    add(Op::Create, user, in, name).mode = mode;
    const std::uint32_t id = steps.back().id;
    if (size > 0) {
      Step& w = add(Op::Write, user, id, "");
      w.data = std::string(size, static_cast<char>('a' + id % 26));
    }
    // CREATE's mode passes ganesha's umask: set it as meant.
    Step& m = add(Op::Setattr, user, id, "");
    m.set_mode = true;
    m.mode = mode;
    return id;
  };
  auto dir = [&](int user, std::uint32_t in, const std::string& name, std::uint32_t mode) {
    add(Op::Mkdir, user, in, name).mode = mode;
    const std::uint32_t id = steps.back().id;
    Step& m = add(Op::Setattr, user, id, "");
    m.set_mode = true;
    m.mode = mode;
    return id;
  };
  const std::uint32_t a = file(0, kTreeLabel, "a", 0644, 100);
  file(1, kTreeLabel, "b", 0600, 40);
  file(2, kTreeLabel, "c", 0640, 10);
  const std::uint32_t d = dir(0, kTreeLabel, "d", 0755);
  file(0, d, "e", 0644, 20);
  const std::uint32_t g = dir(1, kTreeLabel, "g", 0700);
  file(1, g, "h", 0644, 30);
  file(0, kSubLabel, "a", 0664, 5000);
  file(1, kSubLabel, "b", 0644, 50);
  const std::uint32_t c = dir(2, kSubLabel, "c", 0777);
  file(2, c, "d", 0600, 60);
  add(Op::Symlink, 0, kSubLabel, "e").data = "a";
  add(Op::Symlink, 0, kTreeLabel, "f").data = "sub/b";
  Step& link = add(Op::Link, 0, a, "f");
  link.b = c;
  return steps;
}

}  // namespace difftest
