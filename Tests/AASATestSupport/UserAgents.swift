/// Real `User-Agent` strings, for tests of what each visitor gets.
public enum UserAgents {
    /// Safari on an iPhone.
    public static let iPhoneSafari =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        + "Version/18.0 Mobile/15E148 Safari/604.1"
    /// Chrome on an Android phone.
    public static let androidChrome =
        "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
        + "Mobile Safari/537.36"
    /// Chrome on a Mac.
    public static let desktop =
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
        + "Safari/537.36"
    /// Google's crawler.
    public static let googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"

    /// The first of ``inAppBrowsers`` for `id` on `platform`.
    public static func inApp(_ id: String, _ platform: String) -> String {
        inAppBrowsers.first { $0.id == id && $0.platform == platform }!.userAgent
    }

    /// Real `User-Agent`s of in-app browsers: the id of `InAppBrowser.all` (or the web views'), the platform (`ios` or
    /// `android`) and the string, copied from the test fixtures of inapp-spy (src/tests/mobile.ts), ua-parser-js
    /// (test/data/ua/browser/browser-all.json) and uap-core (tests/test_ua.yaml).
    public static let inAppBrowsers: [(id: String, platform: String, userAgent: String)] = [
        (
            "instagram", "ios",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 26_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                + "Mobile/23E254 Instagram 424.1.0.31.54 (iPhone18,4; iOS 26_4_1; en_GB; en-GB; scale=3.00; 1260x2736; "
                + "IABMV/1; 933996394) NW/3 Safari/604.1"
        ),
        (
            "instagram", "android",
            "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240905.003; wv) AppleWebKit/537.36 (KHTML, like Gecko) "
                + "Version/4.0 Chrome/130.0.6723.58 Mobile Safari/537.36 Instagram 355.1.0.44.103 Android (34/14; 420dpi; "
                + "1080x2205; Google/google; Pixel 8; shiba; shiba; en_US; 658190016)"
        ),
        (
            "facebook", "ios",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/22B83 "
                + "[FBAN/FBIOS;FBAV/488.0.0.68.101;FBBV/658219612;FBDV/iPhone12,8;FBMD/iPhone;FBSN/iOS;FBSV/18.1;FBSS/2;"
                + "FBID/phone;FBLC/en_US;FBOP/5;FBRV/0;IABMV/1]"
        ),
        (
            "facebook", "ios",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_6_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                + "Mobile/22G100 Safari/604.1 MetaIAB Facebook"
        ),
        (
            "facebook", "android",
            "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240905.003; wv) AppleWebKit/537.36 (KHTML, like Gecko) "
                + "Version/4.0 Chrome/130.0.6723.83 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/488.0.0.62.79;IABMV/1;]"
        ),
        (
            "messenger", "ios",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 10_2_1 like Mac OS X) AppleWebKit/602.4.6 (KHTML, like Gecko) Mobile/14D27 "
                + "[FBAN/MessengerForiOS;FBAV/124.0.0.50.70;FBBV/63293619;FBDV/iPhone7,1;FBMD/iPhone;FBSN/iOS;FBSV/10.2.1;"
                + "FBSS/3;FBCR/Viettel;FBID/phone;FBLC/vi_VN;FBOP/5;FBRV/0]"
        ),
        (
            "messenger", "android",
            "Mozilla/5.0 (Linux; Android 6.0.1; SM-A910F Build/MMB29M; wv) AppleWebKit/537.36 (KHTML, like Gecko) "
                + "Version/4.0 Chrome/58.0.3029.83 Mobile Safari/537.36 [FB_IAB/MESSENGER;FBAV/120.0.0.14.84;]"
        ),
        (
            "tiktok", "ios",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_3_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                + "Mobile/15E148 BytedanceWebview/d8a21c6 musical_ly_33.2.1 JsSdk/2.0 NetType/WIFI Channel/App Store "
                + "ByteLocale/en Region/US FalconTag/BDB55B46-0286-4504-847E-C8300CB9F79D"
        ),
        (
            "tiktok", "ios",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_6_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                + "Mobile/15E148 Safari/604.1 trill_43.0.0 BytedanceWebview/d8a21c6"
        ),
        (
            "tiktok", "android",
            "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/UQ1A.240105.004; wv) AppleWebKit/537.36 (KHTML, like Gecko) "
                + "Version/4.0 Chrome/121.0.6167.143 Mobile Safari/537.36 musical_ly_2023303040 JsSdk/1.0 NetType/WIFI "
                + "Channel/googleplay AppName/musical_ly app_version/33.3.4 ByteLocale/en ByteFullLocale/en Region/US "
                + "AppId/1233 Spark/1.5.0.5-alpha.2 AppVersion/33.3.4 BytedanceWebview/d8a21c6"
        ),
        (
            "linkedin", "ios",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 15_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                + "Mobile/15E148 [LinkedInApp]"
        ),
        (
            "snapchat", "ios",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_3_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                + "Version/17.3.1 Mobile/15E148 Snapchat/12.72.0.39 (like Safari/8617.2.4.10.8, panda)"
        ),
        (
            "x", "ios",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 11_2_1 like Mac OS X) AppleWebKit/604.4.7 (KHTML, like Gecko) "
                + "Mobile/15C153 Twitter for iPhone/7.19"
        ),
        (
            "x", "android",
            "Mozilla/5.0 (Linux; Android 13; CPH2531 Build/SP1A.210812.016; wv) AppleWebKit/537.36 (KHTML, like Gecko) "
                + "Version/4.0 Chrome/123.0.6312.120 Mobile Safari/537.36 TwitterAndroid"
        ),
        (
            "line", "ios",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 11_2_6 like Mac OS X) AppleWebKit/604.5.6 (KHTML, like Gecko) "
                + "Mobile/15D100 Safari Line/8.4.1"
        ),
        (
            "line", "android",
            "Mozilla/5.0 (Linux; Android 5.0; ASUS_Z00AD Build/LRX21V; wv) AppleWebKit/537.36 (KHTML, like Gecko) "
                + "Version/4.0 Chrome/51.0.2704.81 Mobile Safari/537.36 Line/6.5.1/IAB"
        ),
        (
            "wechat", "ios",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 10_2_1 like Mac OS X) AppleWebKit/602.4.6 (KHTML, like Gecko) "
                + "Mobile/14D27 MicroMessenger/6.5.8 NetType/WIFI Language/zh_CN"
        ),
        (
            "wechat", "android",
            "Mozilla/5.0 (Linux; Android 6.0.1; SM-N9208 Build/MMB29K; wv) AppleWebKit/537.36 (KHTML, like Gecko) "
                + "Version/4.0 Chrome/58.0.3029.83 Mobile Safari/537.36 MicroMessenger/6.5.7.1041 NetType/WIFI "
                + "Language/zh_TW"
        ),
        (
            "threads", "android",
            "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240905.003; wv) AppleWebKit/537.36 (KHTML, like Gecko) "
                + "Version/4.0 Chrome/130.0.6723.58 Mobile Safari/537.36 Barcelona 355.0.0.39.109 Android (34/14; "
                + "420dpi; 1080x2205; Google/google; Pixel 8; shiba; shiba; en_US; 657318936)"
        ),
        (
            "ios-web-view", "ios",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"
        ),
        (
            "android-web-view", "android",
            "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240905.003; wv) AppleWebKit/537.36 (KHTML, like Gecko) "
                + "Version/4.0 Chrome/130.0.6723.58 Mobile Safari/537.36"
        ),
    ]
}
