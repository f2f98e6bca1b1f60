//! The bounded heap as this test program's global allocator. It stays a program of its
//! own: every allocation of the process, the test harness's included, comes from that heap.

mod bounded_global_alloc;
