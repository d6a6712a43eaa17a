use super::*;
use crate::doctor::{apply, diagnose, one_line, revert, Probe};
use crate::Recorded;
use std::path::PathBuf;

fn machine(name: &str) -> Recorded {
    Recorded {
        root: PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name),
    }
}

fn opts(server: &[usize], client: &[usize]) -> Options {
    Options {
        server_cpus: server.to_vec(),
        client_cpus: client.to_vec(),
    }
}

#[test]
fn a_vm_without_cpufreq_says_cannot_tell_for_governor_and_turbo() {
    let vm = machine("doctor-vm");
    assert_eq!(virtualization(&vm).status, Status::Warn);
    assert_eq!(virtualization(&vm).found, "a virtual machine");
    assert_eq!(governor(&vm).status, Status::Unknown);
    assert_eq!(turbo(&vm).status, Status::Unknown);
}

#[test]
fn a_powersave_governor_warns_with_the_command_and_the_files_to_write() {
    let c = governor(&machine("doctor-metal"));
    assert_eq!(c.status, Status::Warn);
    assert_eq!(c.found, "powersave on 4 CPUs");
    assert_eq!(
        c.fix.as_deref(),
        Some("cpupower frequency-set -g performance")
    );
    assert_eq!(c.writes.len(), 4);
    assert_eq!(c.writes[0].value, "performance");
}

#[test]
fn boost_on_warns_and_says_how_to_turn_it_off() {
    let c = turbo(&machine("doctor-metal"));
    assert_eq!(c.status, Status::Warn);
    assert_eq!(
        c.fix.as_deref(),
        Some("echo 0 > /sys/devices/system/cpu/cpufreq/boost")
    );
}

#[test]
fn server_and_client_on_smt_siblings_warn() {
    let metal = machine("doctor-metal");
    let c = smt(&metal, &opts(&[0], &[2]));
    assert_eq!(c.status, Status::Warn, "{c:?}");
    assert!(c.found.contains("server CPU 0 and client CPU 2"), "{c:?}");
    assert_eq!(smt(&metal, &opts(&[0], &[1])).status, Status::Ok);
    assert_eq!(
        smt(&machine("doctor-vm"), &opts(&[0], &[1])).status,
        Status::Ok
    );
}

#[test]
fn isolated_cpus_are_ok_only_when_they_are_the_servers() {
    let metal = machine("doctor-metal");
    assert_eq!(isolated(&metal, &opts(&[1], &[0])).status, Status::Ok);
    let c = isolated(&metal, &opts(&[0], &[1]));
    assert_eq!(c.status, Status::Warn);
    assert_eq!(c.found, "[1], not the server's");
    assert_eq!(
        isolated(&machine("doctor-vm"), &opts(&[0], &[1])).found,
        "none"
    );
}

#[test]
fn a_load_average_above_half_the_cpus_warns() {
    let c = load_average(&machine("doctor-vm"));
    assert_eq!(
        (c.status, c.found.as_str()),
        (Status::Warn, "4.04 on 2 CPUs")
    );
    assert_eq!(load_average(&machine("doctor-metal")).status, Status::Ok);
}

#[test]
fn network_settings_for_new_connection_runs() {
    let vm = network(&machine("doctor-vm"));
    assert!(vm.iter().all(|c| c.status == Status::Ok), "{vm:?}");
    assert_eq!(vm[1].found, "2 (loopback only)");
    let metal = network(&machine("doctor-metal"));
    assert!(metal.iter().all(|c| c.status == Status::Warn), "{metal:?}");
    assert_eq!(metal[0].found, "40000-50000: 10001 ports");
    assert_eq!(
        metal[2].fix.as_deref(),
        Some("sysctl -w net.core.somaxconn=4096")
    );
}

#[test]
fn io_uring_refusals_are_told_apart() {
    assert_eq!(io_uring_of(Some("0"), Ok(())).status, Status::Ok);
    let disabled = io_uring_of(Some("2"), Err(libc::EPERM));
    assert!(disabled.found.contains("io_uring_disabled=2"));
    let seccomp = io_uring_of(Some("0"), Err(libc::EPERM));
    assert!(seccomp.found.contains("seccomp"), "{seccomp:?}");
}

#[test]
fn a_small_open_files_limit_warns() {
    assert_eq!(open_files_of(1024, 4096).status, Status::Warn);
    assert_eq!(open_files_of(1024, 1 << 20).status, Status::Ok);
}

#[test]
fn a_busy_probe_names_the_busiest_processes_and_steal() {
    let root = |n: &str| machine(n);
    let probe = Probe {
        before: crate::disturbance::sample(&root("noisy-start")),
        after: crate::disturbance::sample(&root("noisy-end")),
        seconds: 10.0,
        busiest: vec![(4242, "stress".into(), 9.9), (77, "sshd".into(), 0.1)],
    };
    let c = other_processes(&probe, &opts(&[0], &[1]));
    assert_eq!(c.status, Status::Warn);
    assert!(c.found.contains("stress (4242) 99%"), "{c:?}");
    assert_eq!(steal(&probe).status, Status::Warn);
}

#[test]
fn the_whole_doctor_on_a_recorded_vm_gives_a_one_line_summary() {
    let vm = machine("doctor-vm");
    let probe = Probe {
        before: crate::disturbance::sample(&machine("quiet-start")),
        after: crate::disturbance::sample(&machine("quiet-end")),
        seconds: 10.0,
        busiest: vec![],
    };
    let checks = diagnose(&vm, &probe, &opts(&[0], &[1]));
    assert_eq!(checks.len(), 15);
    let udp = checks
        .iter()
        .find(|c| c.kind == CheckKind::UdpBuffers)
        .unwrap();
    assert_eq!(udp.status, Status::Warn, "{udp:?}");
    let line = one_line(&checks).unwrap();
    assert!(line.contains("virtualization, isolated CPUs"), "{line}");
}

#[test]
fn apply_writes_the_fixes_and_revert_restores_the_old_values() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("root");
    let file = fake.join("proc/sys/net/core/somaxconn");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "128\n").unwrap();
    let state = dir.path().join("state/doctor-undo.jsonl");
    let checks = network(&machine("doctor-metal"));
    let somaxconn: Vec<_> = checks
        .into_iter()
        .filter(|c| c.kind == CheckKind::Somaxconn)
        .collect();
    let done = apply(&somaxconn, &fake, &state).unwrap();
    assert_eq!(done.len(), 1);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "4096");
    // A second apply changes nothing and keeps the first old value.
    assert!(apply(&somaxconn, &fake, &state).unwrap().is_empty());
    let record = std::fs::read_to_string(&state).unwrap();
    assert_eq!(record.lines().count(), 1, "{record}");
    assert!(record.contains("/proc/sys/net/core/somaxconn"), "{record}");
    let undone = revert(&fake, &state).unwrap();
    assert_eq!(undone[0].old, "128");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "128");
    assert!(!state.exists());
}
