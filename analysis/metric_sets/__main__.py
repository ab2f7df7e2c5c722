from analysis.metric_sets.cli import main

raise SystemExit(main())
