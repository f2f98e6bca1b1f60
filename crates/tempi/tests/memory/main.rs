//! What allocates and what does not: the counting tests, and the bounded heap.

#[path = "../common/mod.rs"]
mod common;

/// The one global allocator of this program, for every module that counts allocations: it
/// counts per thread, so tests running side by side on the harness's threads do not see each
/// other's allocations, and a virtual-time run stays on the thread that started it.
#[global_allocator]
static GLOBAL: common::counting::Counting = common::counting::Counting;

mod bounded_heap;
mod control_calls_memory;
mod failing_calls_memory;
mod kernel_memory;
mod messages_memory;
mod spring_planner;
