print("aasa-server")
