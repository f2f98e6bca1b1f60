//! The built-in examples: their golden outputs, their fuzzing runs and the cross-CPU one.

mod fuzz_examples;
mod golden;
mod xcpu_example;
