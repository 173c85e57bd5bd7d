/// HTTP dates (RFC 9110 §5.6.7, IMF-fixdate) for `Last-Modified` and `If-Modified-Since`, in pure Swift:
/// no formatter objects and no locale on the request path.
public enum HTTPDate {
    private static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Sun, 06 Nov 1994 08:49:37 GMT` for `seconds` since 1970.
    public static func format(_ seconds: Int) -> String {
        let dayNumber = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let secondOfDay = seconds - dayNumber * 86400
        let (year, month, day) = civil(fromDays: dayNumber)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(days[((dayNumber % 7) + 7) % 7]), \(two(day)) \(months[month - 1]) \(year) \(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }

    /// Seconds since 1970 of an IMF-fixdate; `nil` for anything else (the obsolete RFC 850 and asctime
    /// forms are ignored, which makes the condition false and the full response is sent: always safe).
    public static func parse(_ raw: UnsafeRawBufferPointer) -> Int? {
        // "Sun, 06 Nov 1994 08:49:37 GMT" is exactly 29 bytes.
        guard raw.count == 29, raw[3] == UInt8(ascii: ","), raw[4] == 0x20, raw[7] == 0x20, raw[11] == 0x20,
            raw[16] == 0x20, raw[19] == UInt8(ascii: ":"), raw[22] == UInt8(ascii: ":"), raw[25] == 0x20,
            raw[26] == UInt8(ascii: "G"), raw[27] == UInt8(ascii: "M"), raw[28] == UInt8(ascii: "T")
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = raw[index]
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        let monthName = String(decoding: UnsafeRawBufferPointer(rebasing: raw[8..<11]), as: UTF8.self)
        guard let day = number(5..<7), let year = number(12..<16), let hour = number(17..<19),
            let minute = number(20..<22), let second = number(23..<25),
            let monthIndex = months.firstIndex(of: monthName), (1...31).contains(day), hour < 24, minute < 60,
            second < 61
        else { return nil }
        return days(fromCivil: year, monthIndex + 1, day) * 86400 + hour * 3600 + minute * 60 + second
    }

    /// `parse` for a Swift string.
    public static func parse(_ text: String) -> Int? {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBytes { parse(UnsafeRawBufferPointer($0)) }
    }

    /// Seconds since 1970 of a UTC date and time (proleptic Gregorian calendar; a leap second counts as the next
    /// minute's first, as `timegm` does).
    public static func seconds(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int {
        days(fromCivil: year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
    }

    // Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian calendar).
    private static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146097 + dayOfEra - 719468
    }

    private static func civil(fromDays days: Int) -> (Int, Int, Int) {
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let dayOfEra = z - era * 146097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
