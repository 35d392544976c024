// a model path that is a device (it never ends) or a FIFO (it blocks) is refused before reading
memplan::memplan!("/dev/zero");

fn main() {}
