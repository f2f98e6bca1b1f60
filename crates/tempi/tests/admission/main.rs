//! Admission: the admit engines, their registry, and admission in the runtime.

mod admission_instants;
mod admission_runtime;
mod admission_spawn;
mod admission_xcpu;
mod admit_engines;
mod admit_registry;
