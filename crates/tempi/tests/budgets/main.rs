//! Budgets: budget clocks, sets with budgets, and servers.

#[path = "../common/mod.rs"]
mod common;

mod budget_clocks;
mod budget_properties;
mod budget_servers;
