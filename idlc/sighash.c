int idlc_dummy_sighash(void); int idlc_dummy_sighash(void){return 0;}
