//! Messages: sends, calls, replies, timers, payloads and lends; handlers and processes.

#[path = "../common/mod.rs"]
mod common;

mod handler_leftovers;
mod handler_properties;
mod handler_runtimes;
mod handler_saves;
mod handler_unwinds;
mod messages_accounting;
mod messages_calls;
mod messages_fused_reply;
mod messages_handlers;
mod messages_lends;
mod messages_payloads;
mod messages_properties;
mod messages_real_time;
mod messages_timed_refusals;
mod messages_timers;
mod process_properties;
