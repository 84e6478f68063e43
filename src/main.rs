fn main() {
    auditor::alloc::tune_process();
    std::process::exit(auditor::cli::main());
}
