// A Rust program for xputop's tests: it spins for the seconds given in its
// own functions (kept out of line, with frame pointers when built as the
// tests build it), so a sampler that demangles Rust names shows them.
use std::env;
use std::time::{Duration, Instant};

pub mod work {
    pub trait Step {
        fn step(&self, acc: u64) -> u64;
    }

    pub struct Mixer {
        pub salt: u64,
    }

    impl Step for Mixer {
        #[inline(never)]
        fn step(&self, acc: u64) -> u64 {
            acc.rotate_left(5) ^ self.salt
        }
    }

    #[inline(never)]
    pub fn spin_leaf<T: Step>(s: &T, seed: u64, rounds: u64) -> u64 {
        let mut acc = seed;
        for i in 0..rounds {
            acc = s.step(acc).wrapping_add(i);
        }
        acc
    }
}

#[inline(never)]
fn spin_outer(until: Instant) -> u64 {
    let mixer = work::Mixer { salt: 0x9e37_79b9 };
    let mut total = 0u64;
    // Each round starts from the last one's result, so none can be hoisted.
    let mut round = |n| total = work::spin_leaf(&mixer, total, n);
    while Instant::now() < until {
        round(100_000);
    }
    total
}

fn main() {
    let secs: f64 = env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(5.0);
    let until = Instant::now() + Duration::from_secs_f64(secs);
    println!("{}", spin_outer(until));
}
