//! The collator in virtual time: several schedulers on one CPU sharing it by the guaranteed
//! jobs' laxity.

mod common;

use common::{markers, ms, segments};
use tempi::policy::sched::Collator;
use tempi::trace::TraceKind;
use tempi::{Runtime, ThreadSpec, Time};

#[test]
fn collator_hand_computed_schedule() {
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(Collator::standard()));
    rt.spawn(ThreadSpec::new("g1").wcet(ms(2)).deadline(ms(6)), |cx| cx.work(ms(2))).unwrap();
    rt.spawn(ThreadSpec::new("g2").wcet(ms(3)).deadline(ms(10)), |cx| cx.work(ms(3))).unwrap();
    rt.spawn(ThreadSpec::new("r").priority(5), |cx| {
        cx.sleep_until(Time::from_millis(2));
        cx.work(ms(1))
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("be"), |cx| cx.work(ms(20))).unwrap();
    let out = rt.run().unwrap();
    println!("{:#?}", segments(&out));
    println!("{:#?}", markers(&out, TraceKind::Miss));
}
