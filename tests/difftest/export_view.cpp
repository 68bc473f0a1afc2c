#include "tests/difftest/export_view.h"

namespace difftest {
namespace {
constexpr std::size_t kHeader = 6, kMac = 16;
constexpr std::uint8_t kVersion = 1, kRoot = 1, kEmbedded = 2;
}  // namespace

Decoded decode_gateway_handle(const Handle& h) {
  Decoded d;
  if (h.size() < kHeader + kMac || h.size() > 64) {
    d.why = "a gateway handle of " + std::to_string(h.size()) + " bytes";
    return d;
  }
  if (h[0] != kVersion) {
    d.why = "gateway handle version " + std::to_string(h[0]);
    return d;
  }
  for (int i = 1; i <= 4; ++i) d.export_id = (d.export_id << 8) | h[static_cast<std::size_t>(i)];
  const std::uint8_t kind = h[5];
  if (kind == kRoot && h.size() == kHeader + kMac) {
    d.valid = d.root = true;
  } else if (kind == kEmbedded) {
    d.origin.assign(h.begin() + kHeader, h.end() - kMac);
    d.valid = true;
  } else {
    d.why = "gateway handle kind " + std::to_string(kind) + " (the tester reads Root and Embedded handles only)";
  }
  return d;
}

void ExportView::reset(const Handle& root_handle, int root_object) {
  by_object_.clear();
  order_.clear();
  id_ = decode_gateway_handle(root_handle).export_id;
  root_ = root_object;
  learn(root_object, root_handle);
}

void ExportView::learn(int id, const Handle& h) {
  if (by_object_.emplace(id, h).second) order_.push_back(id);
}

const Handle* ExportView::handle(int id) const {
  auto it = by_object_.find(id);
  return it == by_object_.end() ? nullptr : &it->second;
}

}  // namespace difftest
