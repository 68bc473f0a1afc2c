// The coroutine type of every nfsgw layer (Boost.Asio awaitable).
#pragma once

#include <utility>  // Boost 1.74's Asio needs it before its own headers under C++20

#include <boost/asio/awaitable.hpp>

namespace nfsgw {

template <typename T>
using Awaitable = boost::asio::awaitable<T>;

}  // namespace nfsgw
