// The precompiled header of Reckon's own targets (docs/ARCHITECTURE.md, decision 55): the
// third-party and standard headers that most files include, parsed once per build instead of
// once per file. Not part of the product's interface: every header and source file still
// includes what it uses (the out-of-tree test compiles every installed header without it, and
// RECKON_PCH=OFF builds without it). Only headers that are slow to parse and widely included
// belong here; each addition makes every file of the build depend on it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <boost/outcome/basic_result.hpp>
#include <boost/outcome/policy/terminate.hpp>
#include <boost/outcome/try.hpp>
#include <spdlog/spdlog.h>

#ifdef RECKON_PCH_TESTS
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#endif
