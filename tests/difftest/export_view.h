// What the tester holds of one export of nfsgw: the gateway handles nfsgw gave out
// through it, and which origin object each one stands for. The object behind a
// gateway handle is read from the handle itself (cache/handle_codec.h: version(1)
// | export id(4) | kind(1) | payload | mac(16); kind Root for the export's root,
// Embedded with the origin's handle as payload, which every ganesha VFS handle is:
// 24 bytes), so a LOOKUP that answers an old object's handle is told apart from
// one that answers the current object even when the fileid was reused.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tests/difftest/nfs3_client.h"

namespace difftest {

/// What a gateway handle says it stands for.
struct Decoded {
  bool valid = false;     // the layout is one the tester reads
  bool root = false;      // kind Root
  std::uint32_t export_id = 0;
  Handle origin;          // kind Embedded: the origin's handle
  std::string why;        // when not valid
};

Decoded decode_gateway_handle(const Handle& h);

class ExportView {
 public:
  /// `root_handle` is nfsgw's MNT answer; `root_object` the model's id of the root.
  void reset(const Handle& root_handle, int root_object);
  std::uint32_t id() const { return id_; }
  int root() const { return root_; }

  /// Remembers that nfsgw gave `h` for object `id` through this export.
  void learn(int id, const Handle& h);
  const Handle* handle(int id) const;
  /// Objects this export has given handles for, in the order it first did.
  const std::vector<int>& known() const { return order_; }

 private:
  std::uint32_t id_ = 0;
  int root_ = -1;
  std::unordered_map<int, Handle> by_object_;
  std::vector<int> order_;
};

}  // namespace difftest
