def main():\n    return "hello"
