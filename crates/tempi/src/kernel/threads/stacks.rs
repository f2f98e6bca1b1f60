//! The stack pool: guard-paged stacks mapped ahead of time and reused.
//!
//! Stacks come from `corosensei::stack::DefaultStack` (an `mmap` with an inaccessible guard page
//! below the stack, so an overflow faults instead of corrupting memory). Each size is kept in its
//! own free list; a finished thread's stack goes back to the list of its size.
//!
//! Must not: hand out a stack that a live coroutine still uses (only a finished coroutine's
//! stack comes back).

use corosensei::stack::DefaultStack;

use crate::error::Error;

#[derive(Default)]
pub(crate) struct StackPool {
    /// (size, free stacks of that size)
    free: Vec<(usize, Vec<DefaultStack>)>,
}

impl StackPool {
    /// Map `count` stacks of `size` bytes now.
    pub(crate) fn reserve(&mut self, size: usize, count: usize) -> Result<(), Error> {
        let list = self.list(size);
        list.reserve(count);
        for _ in 0..count {
            list.push(DefaultStack::new(size).map_err(stack_error)?);
        }
        Ok(())
    }

    fn list(&mut self, size: usize) -> &mut Vec<DefaultStack> {
        let i = match self.free.iter().position(|(s, _)| *s == size) {
            Some(i) => i,
            None => {
                self.free.push((size, Vec::new()));
                self.free.len() - 1
            }
        };
        &mut self.free[i].1
    }

    pub(crate) fn take(&mut self, size: usize) -> Result<DefaultStack, Error> {
        match self.list(size).pop() {
            Some(s) => Ok(s),
            None => DefaultStack::new(size).map_err(stack_error),
        }
    }

    pub(crate) fn give_back(&mut self, size: usize, stack: DefaultStack) {
        self.list(size).push(stack);
    }
}

/// The error for a stack the system would not map. Out of memory usually means out of
/// mappings rather than of memory: each stack and its guard page count against the process's
/// limit on mappings, which is far below what tens of thousands of stacks need.
fn stack_error(e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::OutOfMemory {
        Error::Stack(format!(
            "{e}; each thread stack is a separate mapping with a guard page, and the system limits \
             the mappings of a process (on Linux, vm.max_map_count): fewer or smaller threads alive at once, \
             or a higher limit"
        ))
    } else {
        Error::Stack(e.to_string())
    }
}
