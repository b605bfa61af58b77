from issuetriage.cli import main

main()
