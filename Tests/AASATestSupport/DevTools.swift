public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Headless Chromium driven through the Chrome DevTools Protocol over `--remote-debugging-pipe`: commands go
/// to the browser's fd 3 and answers and events come back on its fd 4, each a JSON message ended by a NUL byte.
/// No WebSocket, no port: the browser talks to this process only.
///
/// Tests use it to do what a user does (type into a field, press Enter, click), and to see what a user sees:
/// the DOM after scripts ran, screenshots at a given width and colour scheme, every request the page made and
/// every console or policy message.
public final class DevTools {
    /// A failure of the browser or of a command, with what the browser said.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The browsers tried, in order.
    public static let candidates = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]

    /// The first browser installed, or `nil`.
    public static var executable: String? { candidates.first { FileManager.default.isExecutableFile(atPath: $0) } }

    private let process: pid_t
    private let commands: Int32
    private let answers: Int32
    private var buffer: [UInt8] = []
    private var nextID = 1
    /// Every event received so far, in order: `method`, `params` and `sessionId`.
    public private(set) var events: [[String: Any]] = []

    /// Starts the browser with a fresh profile in `profile`; its own messages go to `profile/chromium.log`.
    public init(profile: String, arguments: [String] = []) throws {
        guard let executable = Self.executable else {
            throw Failure(description: "Chromium is missing: run scripts/setup.sh --test")
        }
        var toBrowser: [Int32] = [0, 0]
        var fromBrowser: [Int32] = [0, 0]
        guard pipe(&toBrowser) == 0, pipe(&fromBrowser) == 0 else {
            throw Failure(description: "pipe: \(String(cString: strerror(errno)))")
        }
        for descriptor in toBrowser + fromBrowser { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        // dup2 onto 3 and 4 clears close-on-exec there; a source already at 3 or 4 would keep it.
        guard [toBrowser[0], fromBrowser[1]].allSatisfy({ $0 > 4 }) else {
            throw Failure(description: "the pipe's descriptors collide with fd 3 and 4")
        }
        let log = open(profile + "/chromium.log", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toBrowser[0], 3)
        posix_spawn_file_actions_adddup2(&actions, fromBrowser[1], 4)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, log, 1)
        posix_spawn_file_actions_adddup2(&actions, log, 2)
        // Nothing else of this process reaches the browser: a pipe another thread just made for a command's output
        // (curl's, zbarimg's) would otherwise stay open in the browser, and reading it to its end would wait as long
        // as the browser runs.
        if let closeFrom = ChildProcess.closeFrom { _ = closeFrom(&actions, 5) }
        let argv =
            [
                executable, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--metrics-recording-only", "--mute-audio",
                "--user-data-dir=\(profile)", "--remote-debugging-pipe", "about:blank",
            ] + arguments
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, &cArguments, environ)
        close(toBrowser[0])
        close(fromBrowser[1])
        close(log)
        guard spawned == 0 else {
            close(toBrowser[1])
            close(fromBrowser[0])
            throw Failure(description: "posix_spawn \(executable): \(String(cString: strerror(spawned)))")
        }
        process = pid
        commands = toBrowser[1]
        answers = fromBrowser[0]
    }

    deinit {
        _ = try? send("Browser.close", timeout: 5)
        close(commands)
        close(answers)
        var status: Int32 = 0
        for _ in 0..<50 where waitpid(process, &status, WNOHANG) == 0 { usleep(100_000) }
        if waitpid(process, &status, WNOHANG) == 0 {
            kill(process, SIGKILL)
            waitpid(process, &status, 0)
        }
    }

    /// Sends a command and returns its `result`; events that arrive meanwhile are kept in ``events``.
    ///
    /// - Throws: ``Failure`` with the browser's error message, or when no answer came within `timeout` seconds.
    @discardableResult
    public func send(
        _ method: String, _ parameters: [String: Any] = [:], session: String? = nil, timeout: TimeInterval = 30
    ) throws -> [String: Any] {
        let id = nextID
        nextID += 1
        var message: [String: Any] = ["id": id, "method": method, "params": parameters]
        if let session { message["sessionId"] = session }
        var bytes = [UInt8](try JSONSerialization.data(withJSONObject: message))
        bytes.append(0)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(commands, $0.baseAddress, $0.count) }
            guard count > 0 else { throw Failure(description: "\(method): the browser closed its pipe") }
            written += count
        }
        let deadline = TestTime.deadline(timeout)
        while true {
            let answer = try nextMessage(until: deadline, waitingFor: method)
            guard answer["id"] as? Int == id else { continue }
            if let error = answer["error"] as? [String: Any] {
                throw Failure(description: "\(method): \(error["message"] ?? error)")
            }
            return answer["result"] as? [String: Any] ?? [:]
        }
    }

    /// Waits for an event named `method` (of `session`, when given) that arrived after the first `after` events.
    public func waitForEvent(
        _ method: String, session: String? = nil, after: Int = 0, timeout: TimeInterval = 30
    ) throws -> [String: Any] {
        let deadline = TestTime.deadline(timeout)
        var seen = after
        while true {
            for event in events[seen...]
            where event["method"] as? String == method && (session == nil || event["sessionId"] as? String == session) {
                return event["params"] as? [String: Any] ?? [:]
            }
            seen = events.count
            _ = try nextMessage(until: deadline, waitingFor: method)
        }
    }

    /// Reads one message, keeping it in ``events`` when it is one.
    private func nextMessage(until deadline: Date, waitingFor what: String) throws -> [String: Any] {
        while true {
            if let end = buffer.firstIndex(of: 0) {
                let data = Data(buffer[..<end])
                buffer.removeSubrange(...end)
                guard let message = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { continue }
                if message["method"] != nil { events.append(message) }
                return message
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw Failure(description: "\(what): no answer from the browser in time") }
            var descriptor = pollfd(fd: answers, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, Int32(min(remaining, 1) * 1000)) >= 0 else { continue }
            guard descriptor.revents != 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let count = read(answers, &chunk, chunk.count)
            guard count > 0 else { throw Failure(description: "\(what): the browser exited") }
            buffer += chunk[..<count]
        }
    }

    /// Opens a new tab of `width` × `height` CSS pixels, in the dark colour scheme when `dark`.
    public func openPage(width: Int, height: Int, dark: Bool = false) throws -> Page {
        let target = try send("Target.createTarget", ["url": "about:blank"])
        guard let targetID = target["targetId"] as? String else { throw Failure(description: "no targetId") }
        let attached = try send("Target.attachToTarget", ["targetId": targetID, "flatten": true])
        guard let session = attached["sessionId"] as? String else { throw Failure(description: "no sessionId") }
        let page = Page(devTools: self, session: session)
        for domain in ["Page", "Runtime", "Network", "Log"] { try page.send("\(domain).enable") }
        try page.resize(width: width, height: height)
        try page.colourScheme(dark: dark)
        return page
    }

    /// How many distinct colours a PNG has (sampling every 7th pixel), decoded and read back by the browser
    /// itself in a blank tab: a blank or one-colour screenshot has one or two.
    public func distinctColours(in png: Data) throws -> Int {
        let page = try openPage(width: 100, height: 100)
        let count = try page.evaluate(
            """
            (async () => {
              const image = new Image();
              image.src = 'data:image/png;base64,\(png.base64EncodedString())';
              await image.decode();
              const canvas = document.createElement('canvas');
              canvas.width = image.width;
              canvas.height = image.height;
              const context = canvas.getContext('2d');
              context.drawImage(image, 0, 0);
              const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
              const colours = new Set();
              for (let i = 0; i < pixels.length; i += 4 * 7) colours.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
              return colours.size;
            })()
            """)
        try send("Target.closeTarget", ["targetId": try page.targetID()])
        return (count as? Int) ?? 0
    }

    /// One tab, attached through its own session.
    public final class Page {
        /// The browser.
        public let devTools: DevTools
        /// The session of this tab's target.
        public let session: String

        init(devTools: DevTools, session: String) {
            self.devTools = devTools
            self.session = session
        }

        /// The tab's target, for `Target.closeTarget`.
        func targetID() throws -> String {
            let info = try send("Target.getTargetInfo")
            guard let id = (info["targetInfo"] as? [String: Any])?["targetId"] as? String else {
                throw Failure(description: "no targetId")
            }
            return id
        }

        /// Sends a command to this tab.
        @discardableResult
        public func send(_ method: String, _ parameters: [String: Any] = [:]) throws -> [String: Any] {
            try devTools.send(method, parameters, session: session)
        }

        /// The viewport: `width` × `height` CSS pixels, a phone's (touch, mobile layout) below 600 wide.
        public func resize(width: Int, height: Int) throws {
            try send(
                "Emulation.setDeviceMetricsOverride",
                ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600])
        }

        /// The `User-Agent` the tab sends (and `navigator.userAgent`), from the next request on.
        public func setUserAgent(_ userAgent: String) throws {
            try send("Emulation.setUserAgentOverride", ["userAgent": userAgent])
        }

        /// `prefers-color-scheme`.
        public func colourScheme(dark: Bool) throws {
            try send(
                "Emulation.setEmulatedMedia",
                ["features": [["name": "prefers-color-scheme", "value": dark ? "dark" : "light"]]])
        }

        /// Loads `url` and waits for its load event.
        public func navigate(_ url: String) throws {
            let before = devTools.events.count
            let result = try send("Page.navigate", ["url": url])
            if let error = result["errorText"] as? String { throw Failure(description: "\(url): \(error)") }
            _ = try devTools.waitForEvent("Page.loadEventFired", session: session, after: before)
        }

        /// Evaluates `expression` in the page (awaiting a promise) and returns its value as JSON would carry it.
        ///
        /// - Throws: ``Failure`` with the exception when the expression throws.
        @discardableResult
        public func evaluate(_ expression: String) throws -> Any? {
            let result = try send(
                "Runtime.evaluate", ["expression": expression, "awaitPromise": true, "returnByValue": true])
            if let exception = result["exceptionDetails"] as? [String: Any] {
                let description = (exception["exception"] as? [String: Any])?["description"] ?? exception["text"] ?? ""
                throw Failure(description: "\(expression): \(description)")
            }
            return (result["result"] as? [String: Any])?["value"]
        }

        /// Waits until `expression` is truthy, evaluating it every 100 ms, and returns its value.
        @discardableResult
        public func wait(for expression: String, timeout: TimeInterval = 20) throws -> Any {
            let deadline = TestTime.deadline(timeout)
            while true {
                if let value = try evaluate(expression), Self.truthy(value) { return value }
                guard Date() < deadline else { throw Failure(description: "timed out waiting for: \(expression)") }
                usleep(100_000)
            }
        }

        private static func truthy(_ value: Any) -> Bool {
            switch value {
            case let flag as Bool: flag
            case let number as NSNumber: number != 0
            case let text as String: !text.isEmpty
            case is NSNull: false
            default: true
            }
        }

        /// Types `text` into the focused element, as a keyboard would insert it.
        public func type(_ text: String) throws {
            try send("Input.insertText", ["text": text])
        }

        /// Presses and releases a key: `Enter`, `Tab`, `Escape`.
        public func press(_ key: String) throws {
            let codes = ["Enter": 13, "Tab": 9, "Escape": 27]
            var parameters: [String: Any] = ["key": key, "code": key, "windowsVirtualKeyCode": codes[key] ?? 0]
            if key == "Enter" { parameters["text"] = "\r" }
            try send("Input.dispatchKeyEvent", parameters.merging(["type": "keyDown"]) { $1 })
            try send("Input.dispatchKeyEvent", parameters.merging(["type": "keyUp"]) { $1 })
        }

        /// A PNG of the viewport, or of the whole page with `fullPage`.
        public func screenshot(fullPage: Bool = false) throws -> Data {
            let result = try send(
                "Page.captureScreenshot", ["format": "png", "captureBeyondViewport": fullPage])
            guard let text = result["data"] as? String, let data = Data(base64Encoded: text) else {
                throw Failure(description: "Page.captureScreenshot returned no image")
            }
            return data
        }

        /// Every URL this tab requested so far (documents, scripts, fetches, images, `data:` included).
        public var requestedURLs: [String] {
            devTools.events.compactMap { event in
                guard event["method"] as? String == "Network.requestWillBeSent",
                    event["sessionId"] as? String == session,
                    let request = (event["params"] as? [String: Any])?["request"] as? [String: Any]
                else { return nil }
                return request["url"] as? String
            }
        }

        /// The browser's log entries of this tab at `error` level (policy violations, failed loads) and the
        /// page's `console.error` calls and uncaught exceptions.
        public var errors: [String] {
            devTools.events.compactMap { event in
                guard event["sessionId"] as? String == session, let params = event["params"] as? [String: Any]
                else { return nil }
                switch event["method"] as? String {
                case "Log.entryAdded":
                    let entry = params["entry"] as? [String: Any]
                    guard entry?["level"] as? String == "error" else { return nil }
                    return "\(entry?["url"] ?? ""): \(entry?["text"] ?? "")"
                case "Runtime.consoleAPICalled":
                    guard params["type"] as? String == "error" else { return nil }
                    let arguments = params["args"] as? [[String: Any]] ?? []
                    return "console.error: "
                        + arguments.map { "\($0["value"] ?? $0["description"] ?? "")" }
                        .joined(separator: " ")
                case "Runtime.exceptionThrown":
                    let details = params["exceptionDetails"] as? [String: Any]
                    return
                        "exception: \((details?["exception"] as? [String: Any])?["description"] ?? details?["text"] ?? "")"
                default: return nil
                }
            }
        }
    }
}
