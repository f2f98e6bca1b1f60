//! Cross-CPU calls, sends, payloads, remote waits, spawns and synchronisation.

#[path = "../common/mod.rs"]
mod common;

mod xcpu;
mod xcpu_handlers;
mod xcpu_messages;
mod xcpu_payloads;
mod xcpu_queue_flood;
mod xcpu_remote_wait;
mod xcpu_spawn_stamp;
mod xcpu_sync;
