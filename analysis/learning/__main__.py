from analysis.learning.cli import main

raise SystemExit(main())
