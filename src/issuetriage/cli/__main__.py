from issuetriage.cli.app import main

main()
