public import AASACore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether users other than the server can read a private key file, judged from its mode and group.
///
/// Any permission for others exposes the key to every account on the machine. Permission for the group is
/// fine only when the group is one the server itself runs with: Kubernetes mounts Secrets owned by root with
/// the pod's `fsGroup` and group read (`defaultMode: 0400` becomes `0440`), and Debian's `ssl-cert` group is
/// the same idea; any other group exposes the key to that group's members.
public enum PrivateKeyPermissions {
    /// Who else can use a key file, or `nil` when only its owner and the server's own groups can.
    ///
    /// - Parameters:
    ///   - mode: `st_mode` of the file (symlinks followed).
    ///   - group: `st_gid` of the file.
    ///   - processGroups: the server's effective and supplementary group IDs.
    public static func exposure(mode: UInt32, group: UInt32, processGroups: Set<UInt32>) -> String? {
        let others = mode & 0o007
        let grouped = mode & 0o070
        if others != 0 {
            return others & 0o004 != 0 ? "readable by others" : "accessible by others"
        }
        if grouped != 0, !processGroups.contains(group) {
            let verb = grouped & 0o040 != 0 ? "readable" : "accessible"
            return "\(verb) by group \(groupName(group)), which aasa-server does not run with"
        }
        return nil
    }

    /// The finding for the key file at `path`, or `nil` when it is missing or only the server can read it.
    ///
    /// - Parameter refused: whether the key is refused for it (`serve --strict`): the finding is then an error.
    public static func check(_ path: String, refused: Bool = false) -> Diagnostic? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return check(path, mode: UInt32(info.st_mode) & 0o7777, group: UInt32(info.st_gid), refused: refused)
    }

    /// The finding for the key file at `path` whose permission bits are `mode` and group `group` (as `fstat` gave
    /// them when it was read), or `nil` when only the server can read it.
    public static func check(_ path: String, mode: UInt32, group: UInt32, refused: Bool = false) -> Diagnostic? {
        // Only the owner's bits set (0600, 0400): nothing to judge, and no need to ask for the process's groups,
        // which at 100,000 folders is 200,000 system calls.
        guard mode & 0o077 != 0 else { return nil }
        guard let exposure = exposure(mode: mode, group: group, processGroups: processGroups())
        else { return nil }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let octal = String(mode, radix: 8)
        let padded = String(repeating: "0", count: max(0, 4 - octal.count)) + octal
        let consequence = exposure.hasPrefix("readable") ? "copy the key" : "change or replace the key"
        var message = "\(name) has mode \(padded): \(exposure), so other users on this machine can \(consequence)"
        if refused { message += "; refused (--strict), its certificate is not loaded" }
        return Diagnostic(
            refused ? .error : .warning, rule: .privateKeyPermissions, message, file: path,
            hint: "chmod 600 \(path) (Kubernetes: Secret defaultMode 0440 with the pod's fsGroup, see docs/security.md)"
        )
    }

    /// The effective group and the supplementary groups of this process.
    static func processGroups() -> Set<UInt32> {
        var groups: Set<UInt32> = [UInt32(getegid())]
        let count = getgroups(0, nil)
        if count > 0 {
            var list = [gid_t](repeating: 0, count: Int(count))
            let filled = getgroups(count, &list)
            if filled > 0 { groups.formUnion(list.prefix(Int(filled)).map { UInt32($0) }) }
        }
        return groups
    }

    /// `'staff' (gid 50)`, or just the number when the group has no name.
    private static func groupName(_ id: UInt32) -> String {
        // getgrgid_r: reloads run on the watcher's thread while `check` or a test may look up groups too.
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getgrgid_r(gid_t(id), &entry, &buffer, buffer.count, &result) == 0, result != nil,
            let name = entry.gr_name
        else { return "gid \(id)" }
        return "'\(String(cString: name))' (gid \(id))"
    }
}

extension Rule {
    /// Reported by `PrivateKeyPermissions`.
    public static let privateKeyPermissions = Rule(
        "private-key-permissions", .warning,
        "A `privkey.pem` (or the development CA's key) that other users can read: a mode bit for others, or for a group the server does not run with. An error that keeps the certificate from loading under `serve --strict`. See security.md.",
        docs: "security.md#private-keys")
}
