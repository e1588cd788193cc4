//! Solver processes started ahead, so that a session does not wait for
//! one to start: `apc check` asks for one spare per solver when it begins
//! ([`prepare`]), and a session that takes a spare has the next one
//! started at once, off its path. Starting one (a shell launcher,
//! `setsid`, `setpriv`, the watchdog, the solver's binary) cost a session
//! 2–9 ms of its time (`apc check --profile`: `starting a solver`).
//!
//! A spare has been sent nothing: it is in the state of a solver just
//! started, so every answer is what a fresh process would give. (Sending
//! it a warm-up would pay Z3's set-up too, 10 ms at its first declaration,
//! but the queries' `set-logic` must come first, and cvc5 takes no option
//! after it.)
//!
//! Spares are started by one long-lived thread, whose end is apc's: the
//! parent-death signal of a spare's watchdog fires when the thread that
//! started it ends (see `process`). That thread runs at the niceness of
//! the one that called [`prepare`]; a session asked for at another
//! niceness (a portfolio engine's lowered priority) starts its own.

use super::profile::Profile;
use super::session::{Started, launch};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// What a spare is for: the solver's command line.
type Key = (String, Vec<String>);

/// A process being started, or its start's failure.
type Coming = Receiver<Result<Started, String>>;

type Request = (Profile, Sender<Result<Started, String>>);

struct Spares {
    starter: Mutex<Sender<Request>>,
    niceness: i32,
    /// The spares started or being started, one per command line.
    waiting: Mutex<Vec<(Key, Coming)>>,
}

static SPARES: OnceLock<Spares> = OnceLock::new();

/// How long a session waits for a spare being started before it starts a
/// process of its own (a spare normally comes within milliseconds).
const WAIT_FOR_SPARE: Duration = Duration::from_secs(2);

fn key(profile: &Profile) -> Key {
    (profile.command.clone(), profile.args.clone())
}

/// Starts a spare for each of `profiles` that has none waiting, and the
/// thread that starts them (at this thread's niceness) if need be.
pub fn prepare(profiles: &[Profile]) {
    let spares = SPARES.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Request>();
        let spawned = std::thread::Builder::new()
            .name("apc-solver-starter".into())
            .spawn(move || {
                for (profile, reply) in rx {
                    let _ = reply.send(launch(&profile));
                }
            });
        drop(spawned);
        Spares {
            starter: Mutex::new(tx),
            niceness: super::process::this_threads_niceness(),
            waiting: Mutex::default(),
        }
    });
    for profile in profiles {
        let has_one = (spares.waiting.lock().unwrap_or_else(|e| e.into_inner()))
            .iter()
            .any(|(k, _)| *k == key(profile));
        if !has_one {
            request(spares, profile);
        }
    }
}

/// Asks the starter thread for a spare of `profile`.
fn request(spares: &Spares, profile: &Profile) {
    let (tx, rx) = mpsc::channel();
    let sent = (spares.starter.lock().unwrap_or_else(|e| e.into_inner()))
        .send((profile.clone(), tx))
        .is_ok();
    if sent {
        (spares.waiting.lock().unwrap_or_else(|e| e.into_inner())).push((key(profile), rx));
    }
}

/// A spare of `profile`'s solver, if one was prepared for this thread's
/// niceness; the next one starts at once.
pub(super) fn take(profile: &Profile) -> Option<Started> {
    let spares = SPARES.get()?;
    if super::process::this_threads_niceness() != spares.niceness {
        return None;
    }
    let rx = {
        let mut waiting = spares.waiting.lock().unwrap_or_else(|e| e.into_inner());
        let i = waiting.iter().position(|(k, _)| *k == key(profile))?;
        waiting.remove(i).1
    };
    request(spares, profile);
    rx.recv_timeout(WAIT_FOR_SPARE).ok()?.ok()
}
