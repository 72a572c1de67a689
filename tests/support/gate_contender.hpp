#pragma once
// A stand-in for a writer flooded with ingest: a thread that takes the writer's turn at a
// store::WriteGate again and again (entering and leaving at once) until destroyed. Jobs
// sharing the gate then wait, get in as overdue, and yield after every slice, so their runs
// are split into many short transactions at arbitrary steps.

#include <atomic>
#include <thread>

#include "store/write_gate.hpp"

namespace reflectd::test {

class GateContender {
 public:
  explicit GateContender(store::WriteGate& gate)
      : thread_([this, &gate] {
          while (!stop_) {
            if (gate.writer_enter(60'000)) gate.writer_exit();
            std::this_thread::yield();
          }
        }) {}
  ~GateContender() {
    stop_ = true;
    thread_.join();
  }
  GateContender(const GateContender&) = delete;
  GateContender& operator=(const GateContender&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace reflectd::test
