fn main() {
    std::process::exit(auditor::cli::main());
}
