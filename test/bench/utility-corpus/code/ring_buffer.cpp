// ring_buffer.cpp - a fixed-capacity single-producer/single-consumer queue.
//
// Lock-free: the producer only writes `head_`, the consumer only `tail_`.

#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#define RB_VERSION "1.4 /* not a comment */" // version string

namespace rb {

/**
 * SPSC ring buffer.
 * @tparam T element type (must be movable)
 */
template <typename T>
class RingBuffer {
public:
    explicit RingBuffer(std::size_t capacity) : buf_(capacity + 1) {}

    /// Pushes a value; false when full.
    bool push(T value) {
        const auto head = head_.load(std::memory_order_relaxed);
        const auto next = (head + 1) % buf_.size();
        if (next == tail_.load(std::memory_order_acquire)) return false; // full
        buf_[head] = std::move(value);
        head_.store(next, std::memory_order_release);
        return true;
    }

    /* Pops a value; std::nullopt when empty. */
    std::optional<T> pop() {
        const auto tail = tail_.load(std::memory_order_relaxed);
        if (tail == head_.load(std::memory_order_acquire)) return std::nullopt;
        T value = std::move(buf_[tail]);
        tail_.store((tail + 1) % buf_.size(), std::memory_order_release);
        return value;
    }

    std::size_t capacity() const { return buf_.size() - 1; }

private:
    std::vector<T> buf_;
    std::atomic<std::size_t> head_{0};  // written by the producer
    std::atomic<std::size_t> tail_{0};  // written by the consumer
};

// Raw string literal: its "//" and "/*" are data.
const std::string kBanner = R"(ring // buffer /* v1 */)";
const char kSep = '/';

}  // namespace rb

int main() {
    rb::RingBuffer<int> q(4);
    for (int i = 0; i < 6; ++i) q.push(i);  // the last two are dropped
    int sum = 0;
    while (auto v = q.pop()) sum += *v;
    return sum == 6 ? 0 : 1;
}
