//! The hook list of [`Scheduler`](super::Scheduler), written once (the `scheduler_hooks!`
//! invocation in the parent module) and turned into the three places it is needed: the
//! `Scheduler` trait's methods, [`StackedScheduler`](super::StackedScheduler)'s defaults
//! (forward to the previous scheduler, or the same default body through the wrapper's own
//! hooks) and the blanket `impl<S: StackedScheduler> Scheduler for S`. A new hook is one
//! entry in that list.
//!
//! Owns the macros only. Must not hold a hook's meaning or documentation: those are in the
//! list, next to the trait.
//!
//! An entry is a method of `Scheduler`, as written in a trait (its docs, its signature, its
//! default body or `;`), preceded by how a stacked scheduler defaults it:
//! `[forward]` (to the scheduler below) or `[own]` (the trait's default body, through the
//! wrapper's own hooks, so that overriding any of them is seen), with optional extra doc lines
//! for `StackedScheduler` (`[forward: "line", "line"]`).

/// Turns the hook list into `{ [kind extra-docs] [attributes] name (params) [-> ret] body }`
/// groups, one per hook, and hands them to `$cb`. (A return type cannot be followed by a
/// free token tree in a matcher, so each entry is read once here, in one of two shapes: with
/// a default body or with `;`.)
macro_rules! normalise_hooks {
    ($cb:ident [$($done:tt)*]) => {
        $crate::policy::sched::hooks::$cb! { $($done)* }
    };
    ($cb:ident [$($done:tt)*]
        $(#[$attr:meta])* [$kind:ident $(: $($extra:literal),+)?]
        fn $name:ident ($($params:tt)*) $(-> $ret:ty)? ;
        $($rest:tt)*
    ) => {
        $crate::policy::sched::hooks::normalise_hooks! { $cb [$($done)*
            { [$kind $($($extra)+)?] [$(#[$attr])*] $name ($($params)*) [$(-> $ret)?] ; }
        ] $($rest)* }
    };
    ($cb:ident [$($done:tt)*]
        $(#[$attr:meta])* [$kind:ident $(: $($extra:literal),+)?]
        fn $name:ident ($($params:tt)*) $(-> $ret:ty)? $body:block
        $($rest:tt)*
    ) => {
        $crate::policy::sched::hooks::normalise_hooks! { $cb [$($done)*
            { [$kind $($($extra)+)?] [$(#[$attr])*] $name ($($params)*) [$(-> $ret)?] $body }
        ] $($rest)* }
    };
}

/// The `Scheduler` trait's methods, as the list writes them.
macro_rules! scheduler_methods {
    ($({ [$kind:ident $($extra:literal)*] [$($attr:tt)*] $name:ident ($($params:tt)*) [$($ret:tt)*] $body:tt })*) => {
        $( $($attr)* fn $name($($params)*) $($ret)* $body )*
    };
}

/// `StackedScheduler`'s methods: each hook's default as its entry says.
macro_rules! stacked_methods {
    ($($entry:tt)*) => {
        $( $crate::policy::sched::hooks::stacked_method! $entry )*
    };
}

/// One `StackedScheduler` method.
macro_rules! stacked_method {
    ([forward $($extra:literal)*] [$($attr:tt)*] $name:ident ($($params:tt)*) [$($ret:tt)*] $body:tt) => {
        #[doc = concat!("[`Scheduler::", stringify!($name), "`]; default: the previous scheduler's answer.")]
        $(#[doc = $extra])*
        fn $name($($params)*) $($ret)* {
            $crate::policy::sched::hooks::forward_to_prev!($name; $($params)*)
        }
    };
    ([own $($extra:literal)*] [$($attr:tt)*] $name:ident ($($params:tt)*) [$($ret:tt)*] $body:tt) => {
        #[doc = concat!(
            "[`Scheduler::", stringify!($name), "`]; default: the trait's, through this scheduler's own hooks, ",
            "so that overriding any of them is seen."
        )]
        $(#[doc = $extra])*
        fn $name($($params)*) $($ret)* $body
    };
}

/// The blanket `Scheduler` impl of a `StackedScheduler`: every hook calls the stacked one.
macro_rules! blanket_methods {
    ($({ [$kind:ident $($extra:literal)*] [$($attr:tt)*] $name:ident ($($params:tt)*) [$($ret:tt)*] $body:tt })*) => {
        $(
            fn $name($($params)*) $($ret)* {
                $crate::policy::sched::hooks::call_stacked!($name; $($params)*)
            }
        )*
    };
}

/// The call of a hook on the previous scheduler, from its parameters (the receiver, `self`,
/// is the list's own token, so it names the method's receiver).
macro_rules! forward_to_prev {
    ($name:ident; &mut $receiver:ident $(, $arg:ident : $ty:ty)* $(,)?) => {
        $receiver.prev_mut().$name($($arg),*)
    };
    ($name:ident; & $receiver:ident $(, $arg:ident : $ty:ty)* $(,)?) => {
        $receiver.prev().$name($($arg),*)
    };
}

/// The call of a hook's `StackedScheduler` version, from its parameters.
macro_rules! call_stacked {
    ($name:ident; &mut $receiver:ident $(, $arg:ident : $ty:ty)* $(,)?) => {
        $crate::policy::sched::StackedScheduler::$name($receiver $(, $arg)*)
    };
    ($name:ident; & $receiver:ident $(, $arg:ident : $ty:ty)* $(,)?) => {
        $crate::policy::sched::StackedScheduler::$name($receiver $(, $arg)*)
    };
}

pub(super) use {
    blanket_methods, call_stacked, forward_to_prev, normalise_hooks, scheduler_methods, stacked_method, stacked_methods,
};
