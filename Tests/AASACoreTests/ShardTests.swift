import Testing

@testable import AASACore

/// Which shard serves a domain (``Shard``): nginx's MurmurHash2 and `split_clients` choice, so the router's
/// `split_clients` agrees with the servers on names its map does not list.
///
/// The expected values were computed with an independent Python MurmurHash2 and checked against Debian's nginx
/// 1.22: an http `split_clients "$arg_name"` with 2, 3, 7 and 100 parts (percentages from
/// ``Shard/percentages(count:)``) and `return 200 $part…` answered these parts for these names, and agreed with
/// the Python on 3,000 more.
@Suite struct ShardTests {
    /// MurmurHash2 of names whose lengths leave every tail length (0–3 bytes after the 4-byte blocks).
    static let hashes: [(name: String, hash: UInt32)] = [
        ("", 0x0000_0000), ("a", 0x9268_5f5e), ("ab", 0x1aa1_4063), ("abc", 0x1357_7c9b), ("abcd", 0x2687_3021),
        ("shop.example", 0x913e_8869), ("links.example", 0x2601_683f), ("added.example", 0x7963_d353),
        ("shard-0001.example", 0xd25d_5e49), ("xn--bcher-kva.example", 0xbd3c_fafb),
    ]

    /// The part nginx picked for each name with 2, 3, 7 and 100 parts.
    static let nginxChoices: [(name: String, parts: [Int])] = [
        ("shop.example", [1, 1, 3, 56]), ("links.example", [0, 0, 1, 14]), ("added.example", [0, 1, 3, 47]),
        ("localhost", [0, 0, 2, 30]), ("a", [1, 1, 4, 57]), ("abcd", [0, 0, 1, 15]),
        ("shard-0001.example", [1, 2, 5, 82]), ("shard-0002.example", [1, 1, 3, 56]),
        ("shard-0003.example", [0, 0, 0, 9]), ("shard-1000.example", [0, 0, 0, 4]),
        ("xn--bcher-kva.example", [1, 2, 5, 73]), ("www.example.com", [1, 2, 5, 75]),
    ]

    /// Names made to hash to one less than each bound of 2, 3 and 7 parts and to the bound itself (MurmurHash2 is
    /// invertible), with the parts nginx picked: a name at a bound belongs to the next part, and the bounds are
    /// sums of rounded-down parts (0x491d14e2 = 2 × 0x248e8a71, where rounding the sum would give 0x491d14e3).
    static let boundaries: [(name: String, hash: UInt32, parts: [Int])] = [
        ("edge4t7ya4sw.example", 0x7fff_fffe, [0, 1, 3, 50]), ("edgeflkhd4fp.example", 0x7fff_ffff, [1, 1, 3, 50]),
        ("edgeeh8lkw95.example", 0x5553_2616, [0, 0, 2, 33]), ("edgep4hk48qq.example", 0x5553_2617, [0, 1, 2, 33]),
        ("edge3tle4srp.example", 0xaaa6_4c2d, [1, 1, 4, 66]), ("edgekeyty7f3.example", 0xaaa6_4c2e, [1, 2, 4, 66]),
        ("edgeffc1xgy2.example", 0x248e_8a70, [0, 0, 0, 14]), ("edge0xvlvt9x.example", 0x248e_8a71, [0, 0, 1, 14]),
        ("edgeucj9mjo9.example", 0x491d_14e1, [0, 0, 1, 28]), ("edgeg60ueda4.example", 0x491d_14e2, [0, 0, 2, 28]),
        ("edgeiu5bfewt.example", 0x6dab_9f52, [0, 1, 2, 42]), ("edgeew3z39vh.example", 0x6dab_9f53, [0, 1, 3, 42]),
        ("edgeh1dzf77r.example", 0x923a_29c3, [1, 1, 3, 57]), ("edgewnjmsimi.example", 0x923a_29c4, [1, 1, 4, 57]),
        ("edgezbqhuuen.example", 0xb6c8_b434, [1, 2, 4, 71]), ("edgehkp8tqnj.example", 0xb6c8_b435, [1, 2, 5, 71]),
        ("edgev5erokk9.example", 0xdb57_3ea5, [1, 2, 5, 85]), ("edgee9kgx6aw.example", 0xdb57_3ea6, [1, 2, 6, 85]),
        ("edgec8rz8chi.example", 0xffff_ffff, [1, 2, 6, 99]),
    ]

    /// The part counts of ``nginxChoices`` and ``boundaries``.
    static let counts = [2, 3, 7, 100]

    @Test(arguments: hashes)
    func theHashIsNginxMurmurHash2(name: String, hash: UInt32) {
        #expect(Shard.hash(name) == hash, "\(name)")
        #expect(Shard.murmurHash2(Array(name.utf8)) == hash, "\(name)")
    }

    @Test(arguments: nginxChoices)
    func theShardIsThePartNginxSplitClientsPicks(name: String, parts: [Int]) {
        #expect(Self.counts.map { Shard.index(of: name, count: $0) } == parts, "\(name)")
        #expect(Shard.index(of: name, count: 1) == 0)
    }

    @Test(arguments: boundaries)
    func aNameAtABoundBelongsToTheNextPart(name: String, hash: UInt32, parts: [Int]) {
        #expect(Shard.hash(name) == hash, "\(name)")
        #expect(Self.counts.map { Shard.index(of: name, count: $0) } == parts, "\(name)")
    }

    @Test(arguments: boundaries)
    func theHashRangeHoldsExactlyTheNamesTheShardOwns(name: String, hash: UInt32, parts: [Int]) throws {
        for count in Self.counts + [1] {
            for index in 0..<count {
                let shard = try Shard(index: index, count: count)
                #expect(shard.hashRange.contains(UInt64(hash)) == shard.owns(name), "\(name) in \(shard)")
            }
        }
        let ranges = try (0..<7).map { try Shard(index: $0, count: 7).hashRange }
        #expect(ranges.first?.lowerBound == 0 && ranges.last?.upperBound == 1 << 32)
        #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
    }

    @Test func caseAndOneTrailingDotAreIgnored() {
        for name in ["SHOP.Example", "shop.example.", "Shop.Example."] {
            #expect(Shard.hash(name) == Shard.hash("shop.example"), "\(name)")
            #expect(Shard.index(of: name, count: 7) == 3, "\(name)")
        }
        #expect(Shard.hash("shop.example..") != Shard.hash("shop.example"), "only one trailing dot is removed")
    }

    @Test func everyNameHasExactlyOneOwner() throws {
        for count in [1, 2, 3, 7] {
            let shards = try (0..<count).map { try Shard(index: $0, count: count) }
            var owned = [Int](repeating: 0, count: count)
            for number in 1...1000 {
                let name = "shard-\(number).example"
                let owners = shards.filter { $0.owns(name) }
                #expect(owners.count == 1, "\(name) of \(count)")
                #expect(owners.first?.index == Shard.index(of: name, count: count))
                owners.forEach { owned[$0.index] += 1 }
            }
            // An even split, roughly: no shard gets less than two thirds of its share.
            #expect(owned.allSatisfy { $0 * count * 3 >= 1000 * 2 }, "\(owned)")
        }
    }

    @Test func percentagesAreEqualHundredthsForAllButTheLastPart() {
        #expect(Shard.percentages(count: 1) == [])
        #expect(Shard.percentages(count: 2) == [5000])
        #expect(Shard.percentages(count: 3) == [3333, 3333])
        #expect(Shard.percentages(count: 7) == [Int](repeating: 1428, count: 6))
        #expect(Shard.percentages(count: 100) == [Int](repeating: 100, count: 99))
    }

    @Test(arguments: [("0/2", 0, 2), ("1/2", 1, 2), ("0/1", 0, 1), ("99/100", 99, 100), (" 3/7\n", 3, 7)])
    func parsesIndexSlashCount(text: String, index: Int, count: Int) throws {
        let shard = try Shard(parsing: text)
        #expect(shard == (try Shard(index: index, count: count)))
        #expect(shard.description == "\(index)/\(count)")
    }

    /// Texts that are not a shard, the code and part of the message.
    static let refusals: [(text: String, code: ShardError.Code, message: String)] = [
        ("2/2", .indexOutOfRange, "the shard index must be 0..<2"), ("-1/2", .indexOutOfRange, "must be 0..<2"),
        ("1/0", .countOutOfRange, "the shard count must be 1...100"), ("1/101", .countOutOfRange, "must be 1...100"),
        ("a/b", .malformed, "is not a shard: write I/N"), ("", .malformed, "is not a shard"),
        ("1", .malformed, "is not a shard"), ("1/2/3", .malformed, "is not a shard"),
        ("1 /2", .malformed, "is not a shard"),
    ]

    @Test(arguments: refusals)
    func refusesWhatIsNotAShard(text: String, code: ShardError.Code, message: String) {
        do {
            let shard = try Shard(parsing: text)
            Issue.record("'\(text)' parsed as \(shard)")
        } catch {
            #expect(error.code == code, "\(text)")
            #expect(error.description.contains(message), "\(error.description)")
        }
    }
}
