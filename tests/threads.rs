//! Every public filter type is `Send` and `Sync`, as their docs say (a compile-time check: a
//! type that lost either would fail to build this file).

fn send_sync<T: Send + Sync>() {}

#[test]
fn filters_are_send_and_sync() {
    send_sync::<blockbloom::BloomFilter>();
    send_sync::<blockbloom::AtomicBloomFilter>();
    send_sync::<blockbloom::FilterRef<'static>>();
    send_sync::<blockbloom::CountingBloomFilter>();
    send_sync::<blockbloom::DeletableBloomFilter>();
    send_sync::<blockbloom::ScalableBloomFilter>();
    send_sync::<blockbloom::BloomierFilter>();
    send_sync::<blockbloom::parquet::SplitBlockFilter>();
    send_sync::<blockbloom::Builder>();
    send_sync::<blockbloom::Error>();
}
