// Strong ids for the schedule's cross references: a client, resource, hyperepoch, epoch, runnable
// or instance number is a type of its own, so passing one where another is expected (an instance
// where a runnable belongs, a worker index where a resource belongs) does not compile.
//
//   RunnableId r = instance.runnable;        // fine
//   schedule.runnables[r].name                // IdVector: indexed by its own id
//   schedule.runnables[instance.resources[0]] // does not compile: a ResourceId is no RunnableId
//
// The schedule file, the shared-memory layout and the event log store the same numbers as plain
// uint32 (fixed layouts); `index(id)` and `Id{n}` convert at those edges, and nowhere else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace tactus {

/// A client process of the schedule (index into Schedule::clients).
enum class ClientId : std::uint32_t {};
/// A resource: CPU core, GPU, CUDA stream or scheduling mutex (index into Schedule::resources).
enum class ResourceId : std::uint32_t {};
/// A hyperepoch (index into Schedule::hyperepochs).
enum class HyperepochId : std::uint32_t {};
/// An epoch (index into Schedule::epochs).
enum class EpochId : std::uint32_t {};
/// A runnable of the graph (index into Schedule::runnables).
enum class RunnableId : std::uint32_t {};
/// One scheduled run of a runnable in one frame (index into Schedule::instances).
enum class InstanceId : std::uint32_t {};

template <class T>
struct IsStrongId : std::false_type {};
template <>
struct IsStrongId<ClientId> : std::true_type {};
template <>
struct IsStrongId<ResourceId> : std::true_type {};
template <>
struct IsStrongId<HyperepochId> : std::true_type {};
template <>
struct IsStrongId<EpochId> : std::true_type {};
template <>
struct IsStrongId<RunnableId> : std::true_type {};
template <>
struct IsStrongId<InstanceId> : std::true_type {};

/// One of the ids above.
template <class T>
concept StrongId = IsStrongId<T>::value;

/// The number behind an id, for the fixed layouts (file, shared memory, event log) and messages.
template <StrongId Id>
constexpr std::uint32_t index(Id id) {
  return static_cast<std::uint32_t>(id);
}

/// The absent value: a plain uint32 (no core, no stream limit) or any id (no client, no device,
/// no submittee, an empty round-robin step). One constant for both, so `x == kNone` reads the same
/// whatever x is.
struct NoneValue {
  constexpr operator std::uint32_t() const { return std::numeric_limits<std::uint32_t>::max(); }
  template <StrongId Id>
  constexpr operator Id() const {
    return Id{std::numeric_limits<std::uint32_t>::max()};
  }
};
/// Marks an absent optional index or id.
inline constexpr NoneValue kNone{};

template <StrongId Id>
constexpr bool operator==(Id id, NoneValue none) {
  return index(id) == static_cast<std::uint32_t>(none);
}
/// An integer equals kNone as it would equal the uint32 maximum (as before ids had types).
template <class T>
requires std::is_integral_v<T>
constexpr bool operator==(T value, NoneValue none) {
  if constexpr (sizeof(T) <= sizeof(std::uint32_t)) {
    return static_cast<std::uint32_t>(value) == static_cast<std::uint32_t>(none);
  } else {
    return value == static_cast<T>(static_cast<std::uint32_t>(none));
  }
}

/// The ids 0 .. count-1 of one kind, for range-for loops.
template <StrongId Id>
class IdRange {
 public:
  class Iterator {
   public:
    constexpr explicit Iterator(std::uint32_t at) : at_(at) {}
    constexpr Id operator*() const { return Id{at_}; }
    constexpr Iterator& operator++() {
      ++at_;
      return *this;
    }
    constexpr bool operator==(const Iterator&) const = default;

   private:
    std::uint32_t at_;
  };
  constexpr explicit IdRange(std::size_t count) : count_(static_cast<std::uint32_t>(count)) {}
  [[nodiscard]] constexpr Iterator begin() const { return Iterator(0); }
  [[nodiscard]] constexpr Iterator end() const { return Iterator(count_); }

 private:
  std::uint32_t count_;
};

/// A vector indexed by its own kind of id (and, for loops over positions, by a plain index):
/// `schedule.runnables[runnableId]`; another kind of id does not compile.
template <StrongId Id, class T>
class IdVector : public std::vector<T> {
 public:
  using std::vector<T>::vector;
  using std::vector<T>::operator=;
  using std::vector<T>::operator[];
  T& operator[](Id id) { return std::vector<T>::operator[](index(id)); }
  const T& operator[](Id id) const { return std::vector<T>::operator[](index(id)); }
  /// Every id of the vector, in order.
  [[nodiscard]] IdRange<Id> ids() const { return IdRange<Id>(this->size()); }
  /// Whether `id` names an element.
  [[nodiscard]] bool contains(Id id) const { return index(id) < this->size(); }
};

}  // namespace tactus
